"""Render resources/icons/*.svg to PNG (the tray and bundles use PNG: no SVG plugin needed).

Run after editing an SVG:  QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/render_icons.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"


def render(svg: Path, size: int, out: Path) -> None:
    renderer = QSvgRenderer(str(svg))
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    image.save(str(out))


def main() -> int:
    app = QGuiApplication(sys.argv)  # noqa: F841 - Qt needs an application object to paint
    for svg in sorted(ICONS.glob("*.svg")):
        if svg.stem == "pitcrew":
            for size in (48, 128, 256):
                render(svg, size, ICONS / f"pitcrew-{size}.png")
        else:
            render(svg, 64, ICONS / f"{svg.stem}.png")
    print(f"rendered {len(list(ICONS.glob('*.png')))} PNGs into {ICONS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
