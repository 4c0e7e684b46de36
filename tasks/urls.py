from django.urls import path

from tasks import views

app_name = "tasks"

urlpatterns = [
    path("", views.task_index, name="index"),
    path("<str:slug>/", views.task_detail, name="detail"),
]
