"""Stored agents get the keys of their names, oldest first (an agent made later whose key or
look an older one already has keeps none: it stays reachable by its slug). A slug keeps its URL,
unless the old rule lost letters of the name making it ("alice" with a Cyrillic a became "lice",
"Ørsted" "rsted", "東京" nothing): that agent takes the transliterated slug."""

import re

from django.db import migrations

from arena.agent_names import AgentNameRefused, agent_name_parse


def _letters(slug: str) -> int:
    return len(re.sub("[^a-z0-9]", "", slug))


def _free_slug(base: str, taken: set[str]) -> str:
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug


def fill_keys(apps, schema_editor):
    Agent = apps.get_model("arena", "Agent")
    keys: set[str] = set()
    looks: set[str] = set()
    slugs = set(Agent.objects.values_list("slug", flat=True))
    for agent in Agent.objects.order_by("created_at", "pk"):
        try:
            parsed = agent_name_parse(agent.name)
        except AgentNameRefused:
            continue
        agent.name_key = None if parsed.key in keys else parsed.key
        agent.lookalike_key = None if parsed.lookalike_key in looks else parsed.lookalike_key
        keys.add(parsed.key)
        looks.add(parsed.lookalike_key)
        if _letters(agent.slug) < _letters(parsed.slug_base):
            slugs.discard(agent.slug)
            agent.slug = _free_slug(parsed.slug_base, slugs)
            slugs.add(agent.slug)
        agent.save(update_fields=["name_key", "lookalike_key", "slug"])


class Migration(migrations.Migration):
    dependencies = [("arena", "0009_agent_name_keys")]

    operations = [migrations.RunPython(fill_keys, migrations.RunPython.noop)]
