"""A browsable page of the API, rendered on the server from the OpenAPI schema.

The usual interactive viewers load their scripts from a CDN; this page needs no script at all.
"""

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from drf_spectacular.generators import SchemaGenerator

_METHODS = ("get", "post", "put", "patch", "delete")


def _schema_type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    kind = schema.get("type", "")
    return f"{kind} ({schema['format']})" if "format" in schema else kind


def _operations(schema: dict[str, Any]) -> list[dict[str, Any]]:
    operations = []
    for path, item in sorted(schema.get("paths", {}).items()):
        for method in _METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            operations.append(
                {
                    "anchor": operation.get("operationId", f"{method}-{path}"),
                    "method": method.upper(),
                    "path": path,
                    "summary": operation.get("summary", ""),
                    "description": operation.get("description", ""),
                    "parameters": [
                        {
                            "name": parameter["name"],
                            "location": parameter["in"],
                            "required": parameter.get("required", False),
                            "type": _schema_type(parameter.get("schema", {})),
                            "description": parameter.get("description", ""),
                        }
                        for parameter in operation.get("parameters", [])
                    ],
                    "request_types": sorted(
                        operation.get("requestBody", {}).get("content", {}).keys()
                    ),
                    "responses": [
                        {"status": status, "description": response.get("description", "")}
                        for status, response in sorted(operation.get("responses", {}).items())
                    ],
                    "security": sorted(
                        {
                            name
                            for requirement in operation.get("security", [])
                            for name in requirement
                        }
                    ),
                }
            )
    return operations


@require_GET
def api_docs(request: HttpRequest) -> HttpResponse:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return render(
        request,
        "api/docs.html",
        {"info": schema.get("info", {}), "operations": _operations(schema)},
    )


def require_request_bodies(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: every body the API takes is required (an empty
    one is refused), which the schema says only for serializer bodies unless told."""
    for item in result.get("paths", {}).values():
        for method in _METHODS:
            body = item.get(method, {}).get("requestBody")
            if body is not None:
                body["required"] = True
    return result
