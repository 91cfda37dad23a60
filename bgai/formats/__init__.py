"""A position and a play as people and other programs write them: ``Position`` and ``Move``, Position IDs, XGID, FIBS
boards, SVG pictures, plays made one checker at a time, and match files (``matchfile``). Imports only ``bgai.core``.
"""
