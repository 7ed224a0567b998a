//! Pure renderers for the state views (being written).
