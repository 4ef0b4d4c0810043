"""The Unicode fonts the PDF embeds: DejaVu (Latin, Greek, Cyrillic and more), from the system's font folder.

scripts/run and scripts/test install Debian's fonts-dejavu-core when it is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SEARCH_DIRS = (
    Path("/usr/share/fonts/truetype/dejavu"),
    Path("/usr/share/fonts/dejavu"),
    Path("/usr/local/share/fonts"),
    Path("/Library/Fonts"),
)
FILES = {
    "sans": "DejaVuSans.ttf",
    "sans_bold": "DejaVuSans-Bold.ttf",
    "sans_italic": "DejaVuSans-Oblique.ttf",
    "sans_bold_italic": "DejaVuSans-BoldOblique.ttf",
    "mono": "DejaVuSansMono.ttf",
    "mono_bold": "DejaVuSansMono-Bold.ttf",
    "mono_italic": "DejaVuSansMono-Oblique.ttf",
    "mono_bold_italic": "DejaVuSansMono-BoldOblique.ttf",
}


class FontsMissing(RuntimeError):
    """PDF export cannot render text without its fonts."""


@dataclass(frozen=True)
class FontSet:
    sans: Path
    sans_bold: Path
    sans_italic: Path
    sans_bold_italic: Path
    mono: Path
    mono_bold: Path
    mono_italic: Path
    mono_bold_italic: Path


def find_fonts(dirs: tuple[Path, ...] = SEARCH_DIRS) -> FontSet:
    found: dict[str, Path] = {}
    for key, name in FILES.items():
        path = next((d / name for d in dirs if (d / name).is_file()), None)
        if path is None:
            raise FontsMissing(
                f"PDF export needs the DejaVu fonts ({name} not found); install Debian's fonts-dejavu-core"
            )
        found[key] = path
    return FontSet(**found)
