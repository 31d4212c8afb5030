"""The web face: an ASGI application (Starlette) with Jinja2 templates and static files."""
