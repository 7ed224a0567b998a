//! cdkd-deleters (being written).
