//! `AWS::S3::BucketPolicy`: DeleteBucketPolicy on the recorded bucket (`Bucket` property,
//! else the physical id). A bucket without a policy counts as done; a missing bucket
//! counts as gone under the region guard (docs/destroy.md, "SDK deleters").

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::sdk::s3_bucket::is_bucket_name;
use crate::{Deleter, SdkDeleter};

pub struct BucketPolicyDeleter {
    s3: aws_sdk_s3::Client,
}

impl BucketPolicyDeleter {
    pub fn new(s3: aws_sdk_s3::Client) -> Self {
        BucketPolicyDeleter { s3 }
    }
}

impl SdkDeleter for BucketPolicyDeleter {
    const TYPES: &'static [&'static str] = &["AWS::S3::BucketPolicy"];
}

#[async_trait]
impl Deleter for BucketPolicyDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let bucket = req.prop_str("Bucket").unwrap_or(&req.physical_id);
        match self.s3.delete_bucket_policy().bucket(bucket).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["NoSuchBucketPolicy"]) {
                    return Ok(DeleteProgress::Done);
                }
                if info.code_is(&["NoSuchBucket"]) {
                    return guard::not_found(
                        req,
                        self.s3.config().region().map(|r| r.as_ref()),
                        is_bucket_name(bucket),
                        &format!("S3 says bucket {bucket} does not exist"),
                    );
                }
                Err(DeleteError::from_aws(req, "DeleteBucketPolicy", &info))
            }
        }
    }
}
