//! Search every branch of a session (filled in by the search work).
