from allauth.account import views as allauth_views
from django.conf import settings
from django.conf.urls.static import static
from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView

from arena import run_log_views
from arena.api import (
    BatchCreateApi,
    BatchDetailApi,
    BatchResultsApi,
    RunWithdrawApi,
    SubmissionCreateApi,
    SubmissionDetailApi,
)
from arena.api_docs import ApiDocsView
from arena.api_runs import RunCancelApi, RunLaunchApi
from arena.api_trajectories import TrajectoryCreateApi
from arena.selectors import evaluations_visible_to
from evaluator.api import EvaluationCollectionApi, EvaluationDetailApi
from leaderboard import transcript_pages
from leaderboard import views as leaderboard_views
from web.api_errors import not_found as api_not_found

api_v1 = [
    path("submissions", SubmissionCreateApi.as_view(), name="submission-create"),
    path(
        "submissions/<int:submission_id>", SubmissionDetailApi.as_view(), name="submission-detail"
    ),
    path("batches", BatchCreateApi.as_view(), name="batch-create"),
    path("batches/<int:batch_id>", BatchDetailApi.as_view(), name="batch-detail"),
    path("batches/<int:batch_id>/results", BatchResultsApi.as_view(), name="batch-results"),
    # A run's grading is read as its run is: arena's rule, which the evaluator cannot know.
    path(
        "evaluations",
        EvaluationCollectionApi.as_view(readable=evaluations_visible_to),
        name="evaluation-list",
    ),
    path(
        "evaluations/<int:evaluation_id>",
        EvaluationDetailApi.as_view(readable=evaluations_visible_to),
        name="evaluation-detail",
    ),
    path("trajectories", TrajectoryCreateApi.as_view(), name="trajectory-create"),
    path("runs/launch", RunLaunchApi.as_view(), name="run-launch"),
    path("runs/<int:run_id>/cancel", RunCancelApi.as_view(), name="run-cancel"),
    path("runs/<int:run_id>/withdraw", RunWithdrawApi.as_view(), name="run-withdraw"),
    path("schema", SpectacularAPIView.as_view(), name="schema"),
    path("", include("leaderboard.api_urls")),  # the public read API
]

# /tasks/: the list and each task's page (which shows its runs), both the read side's.
tasks_pages = [
    path("", leaderboard_views.task_index, name="index"),
    path("<str:slug>/", leaderboard_views.task_detail, name="detail"),
]

urlpatterns = [
    path("api/v1/", include((api_v1, "api"), namespace="api")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        ApiDocsView.as_view(url_name="api-schema"),
        name="api-docs",
    ),
    # Anything else under /api/ is the API's JSON 404, with DEBUG on as well.
    re_path(r"^api/", api_not_found),
    path("admin/", admin.site.urls),
    # allauth's pages under /accounts/; "login" and "logout" are the names the site links to.
    path("accounts/login/", allauth_views.login, name="login"),
    path("accounts/logout/", allauth_views.logout, name="logout"),
    path("accounts/tokens/", include("accounts.urls")),
    path("accounts/", include("allauth.urls")),
    path("favicon.ico", leaderboard_views.favicon, name="favicon"),
    path("tasks/", include((tasks_pages, "tasks"), namespace="tasks")),
    # No namespace: the run page and others link to these as "transcript", "transcript-export".
    path("runs/<int:run_id>/transcript", transcript_pages.transcript_page, name="transcript"),
    path(
        "runs/<int:run_id>/transcript/export",
        transcript_pages.transcript_export,
        name="transcript-export",
    ),
    path("trajectories/upload/", run_log_views.trajectory_upload_form, name="trajectory-upload"),
    path(
        "trajectories/upload/confirm/",
        run_log_views.trajectory_upload_confirm,
        name="trajectory-upload-confirm",
    ),
    path("", include("leaderboard.urls")),
]
# Under /api/ Django's own errors answer in the API's JSON error shape, elsewhere as pages.
handler400 = "web.api_errors.bad_request"
handler403 = "web.api_errors.permission_denied"
handler404 = "web.api_errors.not_found"

if settings.DEBUG:
    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
