"""Discoverability: which algorithms exist and what they take."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.schemas import AlgorithmListResponse, AlgorithmOut
from app.services.training.algorithms import list_algorithms

router = APIRouter(prefix="/v1", tags=["training"])


@router.get(
    "/algorithms",
    response_model=AlgorithmListResponse,
    summary="Trainable algorithms with their parameters, properties and sources",
)
def get_algorithms() -> AlgorithmListResponse:
    return AlgorithmListResponse(algorithms=[AlgorithmOut(**a) for a in list_algorithms()])
