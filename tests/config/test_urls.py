def test_openapi_schema_describes_the_api(client, db):
    response = client.get("/api/v1/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["info"]["title"] == "Freeze Debt API"
    assert set(schema["paths"]) >= {
        "/api/v1/token",
        "/api/v1/runs",
        "/api/v1/runs/{run_id}",
        "/api/v1/patches",
        "/api/v1/patches/{patch_id}/report",
        "/api/v1/ledger",
        "/api/v1/freezes",
        "/api/v1/repositories",
        "/api/v1/debt",
    }
    # The upload's error answers (section 6), each in the one error shape.
    upload = schema["paths"]["/api/v1/runs"]["post"]["responses"]
    for status in ("400", "401", "403", "409", "413", "415", "429", "503"):
        content = upload[status]["content"]["application/json"]["schema"]
        assert content["$ref"].endswith("/Error"), status
    assert schema["components"]["securitySchemes"]["uploadToken"]["scheme"] == "bearer"
    assert "Error" in schema["components"]["schemas"]


def test_docs_page_lists_endpoints_without_loading_outside_scripts(client, db):
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "GET /api/v1/token" in page
    assert "Describe the presented upload token" in page
    assert "<script" not in page
    assert "cdn" not in page.lower()


def test_admin_is_mounted(client, db):
    response = client.get("/admin/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
