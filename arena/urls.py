from django.conf import settings
from django.conf.urls.static import static
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from arena.api import SubmissionCreateApi, SubmissionDetailApi

api_v1 = [
    path("submissions", SubmissionCreateApi.as_view(), name="submission-create"),
    path(
        "submissions/<int:submission_id>", SubmissionDetailApi.as_view(), name="submission-detail"
    ),
    path("schema", SpectacularAPIView.as_view(), name="schema"),
]

urlpatterns = [
    path("api/v1/", include((api_v1, "api"), namespace="api")),
    path("tasks/", include("tasks.urls")),
    path("", include("leaderboard.urls")),
]
if settings.DEBUG:
    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
