"""Django's PostgreSQL backend, batching its statements under the server's parameter limit."""
