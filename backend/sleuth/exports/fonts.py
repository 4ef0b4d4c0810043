"""The Unicode fonts the PDF embeds, from the system's font folders: DejaVu (Latin, Greek, Cyrillic and
more) for all text, and WenQuanYi Micro Hei for the Chinese, Japanese and Korean characters DejaVu lacks.

scripts/run and scripts/test install Debian's fonts-dejavu-core and fonts-wqy-microhei when missing.
Without the CJK font a PDF still renders; only CJK text would show as empty boxes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SEARCH_DIRS = (
    Path("/usr/share/fonts/truetype/dejavu"),
    Path("/usr/share/fonts/dejavu"),
    Path("/usr/share/fonts/truetype/wqy"),
    Path("/usr/share/fonts/wqy-microhei"),
    Path("/usr/local/share/fonts"),
    Path("/Library/Fonts"),
)
CJK_FILE = "wqy-microhei.ttc"  # a collection: its first face is the proportional Micro Hei
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
    cjk: Path | None = None


def find_fonts(dirs: tuple[Path, ...] = SEARCH_DIRS) -> FontSet:
    found: dict[str, Path] = {}
    for key, name in FILES.items():
        path = next((d / name for d in dirs if (d / name).is_file()), None)
        if path is None:
            raise FontsMissing(
                f"PDF export needs the DejaVu fonts ({name} not found); install Debian's fonts-dejavu-core"
            )
        found[key] = path
    cjk = next((d / CJK_FILE for d in dirs if (d / CJK_FILE).is_file()), None)
    return FontSet(**found, cjk=cjk)
