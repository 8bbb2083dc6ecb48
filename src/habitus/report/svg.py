"""Inline SVG bar charts drawn in Python: one <rect class="bar"> per day, with a <title> each."""

from __future__ import annotations

from html import escape

WIDTH = 420
HEIGHT = 110
PAD_LEFT = 36
PAD_BOTTOM = 18
PAD_TOP = 8


def bar_chart(label: str, key: str, days: list[str], values: list[int]) -> str:
    """A chart of `values` (one per day), scaled to the largest; a zero day has a zero-height bar."""
    top = max(values, default=0)
    plot_w = WIDTH - PAD_LEFT
    plot_h = HEIGHT - PAD_BOTTOM - PAD_TOP
    step = plot_w / max(1, len(values))
    width = max(1.0, step * 0.75)
    parts = [
        f'<svg class="chart" data-series="{escape(key)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'preserveAspectRatio="xMinYMin meet" role="img" aria-label="{escape(label)} per day" '
        'xmlns="http://www.w3.org/2000/svg">',
        f'<line class="axis" x1="{PAD_LEFT}" y1="{HEIGHT - PAD_BOTTOM}" x2="{WIDTH}" y2="{HEIGHT - PAD_BOTTOM}"/>',
        f'<text class="tick" x="{PAD_LEFT - 4}" y="{HEIGHT - PAD_BOTTOM}" text-anchor="end">0</text>',
    ]
    if top:
        parts.append(
            f'<text class="tick" x="{PAD_LEFT - 4}" y="{PAD_TOP + 8}" text-anchor="end">{top}</text>'
        )
    for i, (day, value) in enumerate(zip(days, values, strict=True)):
        h = 0.0 if top == 0 else plot_h * value / top
        x = PAD_LEFT + i * step + (step - width) / 2
        y = HEIGHT - PAD_BOTTOM - h
        parts.append(
            f'<rect class="bar" data-day="{escape(day)}" data-value="{value}" x="{x:.1f}" y="{y:.1f}" '
            f'width="{width:.1f}" height="{h:.1f}"><title>{escape(day)}: {value}</title></rect>'
        )
    for i in sorted({0, len(days) // 2, len(days) - 1}):
        if 0 <= i < len(days):
            x = PAD_LEFT + i * step + step / 2
            parts.append(
                f'<text class="tick" x="{x:.1f}" y="{HEIGHT - 4}" text-anchor="middle">{escape(days[i][5:])}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
