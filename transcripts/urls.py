from django.urls import path

from transcripts import views

# No namespace: the run page and others link to these as "transcript", "transcript-export".
urlpatterns = [
    path("runs/<int:run_id>/transcript", views.transcript_page, name="transcript"),
    path("runs/<int:run_id>/transcript/export", views.transcript_export, name="transcript-export"),
    path("trajectories/upload/", views.trajectory_upload_form, name="trajectory-upload"),
]
