"""The OpenAPI generator's naming of components.

Views here nest their serializers (`EvaluationCreateApi.InputSerializer`), so the default name,
the bare class name, would make every "Input" collide; the enclosing view's name keeps them apart.
"""

from drf_spectacular.openapi import AutoSchema


class ArenaAutoSchema(AutoSchema):
    def get_serializer_name(self, serializer, direction: str) -> str:
        cls = serializer.__class__
        outer, _, inner = cls.__qualname__.rpartition(".")
        if not outer or "<locals>" in outer:
            return super().get_serializer_name(serializer, direction)
        outer = outer.replace(".", "").removesuffix("Api")
        return outer + inner.removesuffix("Serializer")
