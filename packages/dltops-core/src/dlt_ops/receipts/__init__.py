"""Run receipts: per run and resource, every record and every dollar, reconciled."""

from dlt_ops.receipts.model import RECEIPTS_TABLE, RECEIPTS_TABLE_NAME, CostBasis, ReceiptRow

__all__ = ["RECEIPTS_TABLE", "RECEIPTS_TABLE_NAME", "CostBasis", "ReceiptRow"]
