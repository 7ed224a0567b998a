//! cdkd-aws: adapters over the AWS SDK. They move bytes and map SDK errors to typed
//! errors; every decision about the bytes lives in `cdkd-core`.
//!
//! - `config`: the SDK configuration and the S3 client (path-style under an endpoint).
//! - `bucket`: which state bucket, its owner account and its region.
//! - `store`: the state records in S3 (list, get, conditional put, delete, raw objects).
//! - `lock`: cdkd's stack lock, fenced by ETag.
//! - `sfn`: Step Functions runs (start, describe, history, list, stop) and the backend stack's outputs.

pub mod bucket;
pub mod config;
pub mod exports;
pub mod lock;
pub mod s3err;
pub mod sfn;
pub mod store;

pub use aws_config::SdkConfig;
pub use bucket::{BucketError, BucketSource, ResolvedBucket};
pub use lock::{ForceReleased, HeldLock, LockError, LockManager, ReleaseOutcome};
pub use store::{LoadedState, Precondition, StateStore, StoreError};
