# Production image: gunicorn serving the web app; the same image runs Celery workers and beat
# (override the command). Configure it entirely through environment variables (README).

# --- build: wheels for the service and the client, built with the compilers we need ------------
FROM python:3.11-slim-bookworm AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY requirements/ requirements/
COPY client/ client/
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install -r requirements/prod.txt ./client

# --- runtime: the virtual environment, the code, static files collected at build time ----------
FROM python:3.11-slim-bookworm AS runtime
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production
# git: workers fetch patches from repositories' git remotes (git_url) and analyze them.
RUN apt-get update && apt-get install -y --no-install-recommends git openssh-client \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system freezedebt && useradd --system --gid freezedebt --home /app freezedebt
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY --chown=freezedebt:freezedebt manage.py ./
COPY --chown=freezedebt:freezedebt config/ config/
COPY --chown=freezedebt:freezedebt evidence/ evidence/
COPY --chown=freezedebt:freezedebt ledger/ ledger/
COPY --chown=freezedebt:freezedebt dashboards/ dashboards/
COPY --chown=freezedebt:freezedebt sqlreads/ sqlreads/
COPY --chown=freezedebt:freezedebt templates/ templates/
COPY --chown=freezedebt:freezedebt static/ static/
# collectstatic needs settings that load; these throwaway values never reach a running container.
RUN SECRET_KEY=build-only ALLOWED_HOSTS=localhost DATABASE_URL=sqlite:////tmp/build.sqlite3 \
    python manage.py collectstatic --noinput \
 && rm -f /tmp/build.sqlite3
USER freezedebt
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"
# No --forwarded-allow-ips: gunicorn would then mark any caller's "X-Forwarded-Proto: https"
# as HTTPS; trusting a proxy's header is Django's TRUST_X_FORWARDED_PROTO alone.
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", \
     "--access-logfile", "-"]
