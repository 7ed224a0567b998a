//! cdkd-deleters: deletes one recorded resource of a cdkd stack, behind one trait.
//!
//! - [`Deleter`]: `start` a delete, then `poll` it with the [`Handle`] it returned, maybe
//!   from a later Lambda invocation (the handle is serializable).
//! - [`SdkDeleter`]: what each SDK deleter declares next to its code (the types it serves,
//!   its capabilities).
//! - [`Registry`]: maps core's route for a record (SDK, custom resource, no-op, Cloud
//!   Control) to a deleter; [`clients::registry_from_config`] builds one from an
//!   `SdkConfig`.
//! - "Not found" counts as deleted ([`DeleteProgress::AlreadyGone`]) only under the region
//!   guard and only where the physical id is that API's identifier ([`guard`]); otherwise
//!   the delete fails with [`DeleteErrorKind::CannotConfirmDeletion`].
//! - Retain policies are the caller's business: a deleter always deletes.
//! - [`read`]: the current-state readers of `state refresh-observed`, declared beside
//!   the deleters of the same types ([`SdkReader`]), Cloud Control for the rest.

pub mod clients;
pub mod cloudcontrol;
pub mod custom;
pub mod error;
pub mod guard;
pub mod noop;
pub mod progress;
pub mod read;
pub mod registry;
pub mod request;
pub mod sdk;
pub mod steps;

use async_trait::async_trait;

pub use cdkd_core::destroy::decide::{Route, SdkCapabilities};
pub use error::{DeleteError, DeleteErrorKind};
pub use progress::{DeleteProgress, Handle};
pub use read::{ReadError, ReadRequest, Reader, Readers, SdkReader};
pub use registry::Registry;
pub use request::{DeleteOptions, DeleteRequest, FinalSnapshot, RunContext};

/// Deletes resources of one kind.
#[async_trait]
pub trait Deleter: Send + Sync {
    /// Starts (and, for most types, finishes) the delete.
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError>;
    /// Continues a delete that `start` (or an earlier `poll`) left `InFlight`. After an
    /// error the handle is finished; if the error is retryable the caller may `start`
    /// again (with `attempt + 1`). A deleter whose deletes finish inside `start` keeps the
    /// default, which refuses to resume any handle.
    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        sdk::no_poll(req, handle)
    }
}

/// An SDK deleter's declaration, next to its code: the CloudFormation types it deletes
/// and what it can do. [`Registry::with_sdk`] collects it; core's routing reads it.
pub trait SdkDeleter: Deleter + 'static {
    /// The types this deleter serves.
    const TYPES: &'static [&'static str];
    /// What it can do beyond a plain delete (none unless declared).
    const CAPABILITIES: SdkCapabilities = SdkCapabilities {
        final_snapshot: false,
        completes_cloud_control: false,
    };
}
