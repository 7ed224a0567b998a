//! cdkd-engine (being written).
