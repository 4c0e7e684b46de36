from django.urls import path

from leaderboard import views

app_name = "leaderboard"

urlpatterns = [
    path("", views.index, name="index"),
    path("agents/<slug:slug>/", views.agent_detail, name="agent-detail"),
    path("matrix/", views.matrix, name="matrix"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("runs/<int:run_id>/status.json", views.run_status_json, name="run-status"),
    path("compare/", views.compare, name="compare"),
]
