from django.db import models


class Task(models.Model):
    class Category(models.TextChoices):
        TORCH2CUDA = "torch2cuda"
        TORCH2TRITON = "torch2triton"
        TRITON2TRITON = "triton2triton"
        CUDA2CUDA = "cuda2cuda"
        HARD = "hard"

    slug = models.CharField(max_length=200, unique=True)
    title = models.CharField(max_length=200)
    category = models.CharField(max_length=20, choices=Category.choices)
    suite = models.CharField(max_length=100)
    dtype = models.CharField(max_length=20)
    regime = models.CharField(max_length=10)
    # Relative to the catalogue root, so a GPU host with its own checkout finds the same folder.
    folder = models.CharField(max_length=300)
    version_hash = models.CharField(max_length=64)
    manifest = models.JSONField(default=dict)
    prompt = models.TextField(blank=True)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["suite", "slug"]

    def __str__(self) -> str:
        return self.slug
