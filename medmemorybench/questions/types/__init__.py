"""The question types, one module each; `questions.spec` imports every module here (each registers itself)."""
