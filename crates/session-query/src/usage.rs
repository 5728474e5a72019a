//! Token usage and cost totals (filled in by the usage work).
