"""The match equity tables bgai ships besides Kazaross-XG2, converted from the published tables distributed with
GNU Backgammon (Debian's ``gnubg`` package, ``/usr/share/gnubg/met``): each table's numbers as published, its name
and its source kept with it.

    python -m bgai.coach.met_tables [--from /usr/share/gnubg/met] [--out bgai/data/met]

Writes one JSON file a table (``TABLES``: the file there, the name bgai gives it, its citation), in the layout of
``bgai.core.match.MatchEquityTable``: ``pre_crawford[a - 1][b - 1]`` the chance of the side ``a`` away against ``b``
away, ``post_crawford[b - 1]`` the trailer's ``b`` away against a 1-away leader after the Crawford game. Only tables
given explicitly (every entry) are taken; the formula tables (Zadeh's, mec's) are not, nor ``g11.xml``, whose
file lacks an entry.
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from pathlib import Path

from bgai.core.files import module_command, write_atomically

#: file in gnubg's folder -> (bgai's name, the citation)
TABLES = {
    "Rockwell-Kazaross.xml": ("rockwell-kazaross", "David Rockwell and Neil Kazaross (2008-2010): GNU Backgammon "
                              "Supremo full rollouts to 15 points, extended to 25 by projecting take points"),
    "woolsey.xml": ("woolsey", 'Kit Woolsey, "Inside Backgammon", Vol. 2, No. 2 (1992)'),
    "jacobs.xml": ("jacobs-trice", "J. Jacobs and W. Trice, Can a Fish Taste Twice as Good (1996)"),
    "snowie.xml": ("snowie", "Snowie 2.1, Oasya (1999)"),
}


def read_table(path: Path) -> tuple[list[list[float]], list[float]]:
    """(pre-Crawford rows, post-Crawford row) of a gnubg MET file with explicit tables."""
    root = ET.parse(path).getroot()
    pre = root.find("pre-crawford-table")
    post = root.find("post-crawford-table")
    if pre is None or post is None or pre.get("type") != "explicit" or post.get("type") != "explicit":
        raise ValueError(f"{path.name}: not an explicit table")
    rows = [[float(me.text or "") for me in row.findall("me")] for row in pre.findall("row")]
    (post_row,) = [[float(me.text or "") for me in row.findall("me")] for row in post.findall("row")]
    n = len(rows)
    if any(len(row) != n for row in rows) or len(post_row) != n:
        raise ValueError(f"{path.name}: a table of {n} rows must have {n} entries in each row and the post-Crawford")
    return rows, post_row


def _write(path: Path, payload: bytes) -> None:
    write_atomically(path, lambda handle: handle.write(payload))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=Path, default=Path("/usr/share/gnubg/met"))
    parser.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "data" / "met")
    args = parser.parse_args(argv)
    for filename, (name, citation) in TABLES.items():
        pre, post = read_table(args.source / filename)
        data = {"name": name, "source": f"{citation}. Converted from the file distributed with GNU Backgammon 1.07 "
                f"(Debian package gnubg), {filename}, by `{module_command('bgai.coach.met_tables', argv)}`.",
                "length": len(post), "pre_crawford": pre, "post_crawford": post}
        _write(args.out / f"{name}.json", (json.dumps(data, indent=1) + "\n").encode())
        print(f"{name}: {len(post)} points -> {args.out / f'{name}.json'}")


if __name__ == "__main__":
    main()
