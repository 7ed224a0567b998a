//! SDK deleters: one module per resource type that this project deletes through the
//! type's own API instead of Cloud Control (spec §3.3).

pub mod bucket_policy;
pub mod dynamodb;
pub mod iam_group;
pub mod iam_managed_policy;
pub mod iam_policy;
pub mod iam_role;
pub mod iam_user;
pub mod instance_profile;
pub mod kms;
pub mod lambda;
pub mod layer_version;
pub mod logs;
pub mod queue_policy;
pub mod s3_bucket;
pub mod sns;
pub mod sqs;
pub mod ssm;
pub mod subscription;
pub mod topic_policy;

use crate::error::DeleteError;
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;

/// The answer of `poll` for a deleter whose deletes finish inside `start`.
pub(crate) fn no_poll(req: &DeleteRequest, handle: &Handle) -> Result<DeleteProgress, DeleteError> {
    Err(DeleteError::failed(
        req,
        format!("this deleter finishes inside start and cannot resume a {handle:?} handle"),
    ))
}

/// Ok for success and for NoSuchEntity (the thing to remove is already gone).
pub(crate) fn ignore_no_such_entity<O, E>(
    req: &DeleteRequest,
    action: &str,
    result: Result<
        O,
        aws_smithy_runtime_api::client::result::SdkError<
            E,
            aws_smithy_runtime_api::client::orchestrator::HttpResponse,
        >,
    >,
) -> Result<(), DeleteError>
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    match result {
        Ok(_) => Ok(()),
        Err(e) => {
            let info = crate::error::aws_error_info(&e);
            if info.code_is(&["NoSuchEntity"]) {
                Ok(())
            } else {
                Err(DeleteError::from_aws(req, action, &info))
            }
        }
    }
}
