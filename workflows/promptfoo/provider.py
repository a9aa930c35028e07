"""A promptfoo Python provider: answers with the prompt in capitals."""


def call_api(prompt, options, context):
    return {"output": prompt.upper()}
