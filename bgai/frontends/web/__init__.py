"""The web front end of bgai: ``create_app`` (a FastAPI app with the play page and the JSON API)."""

from bgai.frontends.web.app import create_app

__all__ = ["create_app"]
