from django.urls import path

from leaderboard import api

urlpatterns = [
    path("leaderboard", api.LeaderboardApi.as_view(), name="leaderboard"),
    path("agents", api.AgentListApi.as_view(), name="agent-list"),
    path("agents/<slug:slug>", api.AgentDetailApi.as_view(), name="agent-detail"),
    path("tasks", api.TaskListApi.as_view(), name="task-list"),
    path("tasks/<str:slug>", api.TaskDetailApi.as_view(), name="task-detail"),
    path("runs", api.RunListApi.as_view(), name="run-list"),
    path("runs/<int:run_id>", api.RunDetailApi.as_view(), name="run-detail"),
]
