"""The Open Inference Protocol (KServe V2) over HTTP/REST: health, metadata, infer.

Specification: https://github.com/kserve/open-inference-protocol (inference_rest.md).
"""
