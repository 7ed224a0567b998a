//! Records with nothing to delete in AWS (`AWS::CDK::Metadata` and the types docs/destroy.md, "SDK deleters"
//! lists as no-ops): done at once, no AWS call.

use async_trait::async_trait;

use crate::error::DeleteError;
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::Deleter;

pub struct NoOpDeleter;

#[async_trait]
impl Deleter for NoOpDeleter {
    async fn start(&self, _req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        Ok(DeleteProgress::Done)
    }

    async fn poll(
        &self,
        _req: &DeleteRequest,
        _handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        Ok(DeleteProgress::Done)
    }
}
