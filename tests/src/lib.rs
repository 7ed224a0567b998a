//! Test harness: starts the local AWS emulator (being written).
