from django.urls import path

from leaderboard import views

app_name = "leaderboard"

urlpatterns = [
    path("", views.index, name="index"),
    path("agents/", views.agent_list, name="agent-list"),
    path("agents/<slug:slug>/", views.agent_detail, name="agent-detail"),
    path("runs/", views.run_list, name="run-list"),
    path("transcripts/", views.transcript_list, name="transcript-list"),
    path("scoring/", views.scoring, name="scoring"),
    path("matrix/", views.matrix, name="matrix"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("runs/<int:run_id>/status.json", views.run_status_json, name="run-status"),
    path("compare/", views.compare, name="compare"),
    path("compare/agents/", views.compare_agents, name="compare-agents"),
]
