"""The API's documentation page (/api/docs/): Swagger UI served from this site's static files.

Kept apart from the schema generator's module, which DRF imports while drf-spectacular's views
are still loading.
"""

from django.conf import settings
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularSwaggerView


class ApiDocsView(SpectacularSwaggerView):
    """Swagger UI under the page's own introduction, which states the current write rate."""

    template_name = "api/docs.html"

    # A page about the API, not an operation of it; overriding get() drops the parent's exclusion.
    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        response.data["write_rate"] = settings.ARENA_WRITE_RATE or "no limit"
        return response
