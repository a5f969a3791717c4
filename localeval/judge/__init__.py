"""The judge: a GGUF model in process or an OpenAI-compatible server, behind one protocol, with its checks and speeds."""
