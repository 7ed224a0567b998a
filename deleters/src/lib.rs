//! cdkd-deleters: deletes one recorded resource of a cdkd stack, behind one trait.
//!
//! - [`Deleter`]: `start` a delete, then `poll` it with the [`Handle`] it returned, maybe
//!   from a later Lambda invocation (the handle is serializable).
//! - [`Registry`]: picks the deleter for a record (SDK, custom resource, no-op, Cloud
//!   Control); [`clients::registry_from_config`] builds one from an `SdkConfig`.
//! - "Not found" counts as deleted ([`DeleteProgress::AlreadyGone`]) only under the region
//!   guard and only where the physical id is that API's identifier ([`guard`]); otherwise
//!   the delete fails with [`DeleteErrorKind::CannotConfirmDeletion`].
//! - Retain policies are the caller's business: a deleter always deletes.

pub mod clients;
pub mod cloudcontrol;
pub mod custom;
pub mod error;
pub mod guard;
pub mod noop;
pub mod progress;
pub mod registry;
pub mod request;
pub mod sdk;

use async_trait::async_trait;

pub use error::{DeleteError, DeleteErrorKind};
pub use progress::{DeleteProgress, Handle};
pub use registry::{Registry, Route};
pub use request::{DeleteOptions, DeleteRequest, FinalSnapshot, RunContext};

/// Deletes resources of one kind.
#[async_trait]
pub trait Deleter: Send + Sync {
    /// Starts (and, for most types, finishes) the delete.
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError>;
    /// Continues a delete that `start` (or an earlier `poll`) left `InFlight`. After an
    /// error the handle is finished; if the error is retryable the caller may `start`
    /// again (with `attempt + 1`).
    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError>;
}
