"""The modules whose line coverage is under a floor, from `coverage json`'s file: `make coverage` prints them
and fails when there are any."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def below(report: dict, floor: float) -> list[tuple[str, float]]:
    files = report["files"]
    return sorted((name, data["summary"]["percent_covered"]) for name, data in files.items()
                  if data["summary"]["percent_covered"] < floor)


def main(argv: list[str]) -> int:
    path, floor = Path(argv[0]), float(argv[1])
    low = below(json.loads(path.read_text()), floor)
    for name, pct in low:
        print(f"{pct:5.1f}%  {name}")
    print(f"{len(low)} modules under {floor:g}%" if low else f"every module at {floor:g}% or above")
    return 1 if low else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
