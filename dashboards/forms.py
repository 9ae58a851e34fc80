"""A form renderer that writes plain inputs and text areas in Python.

Django renders each widget through a template, and on the repository page its three policy
inputs took longer than the rest of the form. This renderer writes the same HTML as Django's
own ``input.html`` and ``textarea.html`` (which a test compares it with) and hands every other
template (selects, checkboxes, whole forms, overridden templates) to Django's renderer.
"""

from __future__ import annotations

import html
from typing import Any

from django.forms.renderers import DjangoTemplates

# Django's widget templates that are input.html and nothing else.
_INPUT_TEMPLATES = frozenset(
    f"django/forms/widgets/{name}.html"
    for name in ("input", "text", "number", "email", "url", "password", "hidden", "search", "tel")
)
_TEXTAREA_TEMPLATE = "django/forms/widgets/textarea.html"


def _text(value: Any) -> str:
    """As the templates write a value: ``%s``, then escaped."""
    return html.escape("%s" % (value,))  # noqa: UP031 - the templates' stringformat:'s'


def _attrs(attrs: dict[str, Any]) -> str:
    """As ``attrs.html``: False leaves an attribute out, True writes its name alone."""
    return "".join(
        f" {_text(name)}" if value is True else f' {_text(name)}="{_text(value)}"'
        for name, value in attrs.items()
        if value is not False
    )


class InlineWidgetRenderer(DjangoTemplates):
    def render(self, template_name: str, context: dict[str, Any], request: Any = None) -> str:
        widget = context.get("widget")
        if widget is not None and template_name in _INPUT_TEMPLATES:
            value = widget["value"]
            shown = "" if value is None else f' value="{_text(value)}"'
            return (
                f'<input type="{_text(widget["type"])}" name="{_text(widget["name"])}"{shown}'
                f"{_attrs(widget['attrs'])}>"
            )
        if widget is not None and template_name == _TEXTAREA_TEMPLATE:
            value = widget["value"]
            body = _text(value) if value else ""
            name = _text(widget["name"])
            return f'<textarea name="{name}"{_attrs(widget["attrs"])}>\n{body}</textarea>'
        return super().render(template_name, context, request=request)
