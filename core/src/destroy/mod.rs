//! Destroy decisions (being written).
