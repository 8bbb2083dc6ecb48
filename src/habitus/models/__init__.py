"""Optional language models: `[models.NAME]` tables of kind openai, anthropic or command.

The whole API other code needs:

    from habitus.models import ModelError, call_json

    try:
        answer = call_json(
            config, name,                      # a habitus.state.config.Config, and the [models.NAME]
            system="Return JSON only. ...",
            user={"observations": [...]},      # str, or an object sent as compact JSON; redact first
            schema="model-envelope.v1",        # a published schema name, or a JSON Schema dict
            max_tokens=4096,
            purpose="analyze",
        )
    except ModelError as error:
        if error.quarantine:                   # an answer came but is unusable: keep it, change nothing
            store(error.reason, error.details, error.answer)
        raise                                  # code model_error, exit 1, details.reason in REASONS

Only the standard library is imported here; jsonschema loads when an answer is validated, and the
HTTP and subprocess machinery when a call is made.
"""

from habitus.models.call import QUARANTINE_REASONS, REASONS, ModelError, call_json

__all__ = ["QUARANTINE_REASONS", "REASONS", "ModelError", "call_json"]
