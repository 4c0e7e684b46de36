from django.urls import path

from leaderboard import views

app_name = "leaderboard"

urlpatterns = [
    path("", views.index, name="index"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
]
