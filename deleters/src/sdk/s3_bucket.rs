//! `AWS::S3::Bucket`: DeleteBucket by name. A bucket that still holds objects is refused
//! with a message naming it; this deleter never deletes objects.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError, DeleteErrorKind};
use crate::guard;
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::Deleter;

pub struct S3BucketDeleter {
    s3: aws_sdk_s3::Client,
}

impl S3BucketDeleter {
    pub fn new(s3: aws_sdk_s3::Client) -> Self {
        S3BucketDeleter { s3 }
    }
}

/// S3 bucket naming rules (3-63 of lower-case letters, digits, `.` and `-`, starting and
/// ending with a letter or digit): only such an id is a bucket name.
pub fn is_bucket_name(id: &str) -> bool {
    let ok_chars = id
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
    let edge = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    (3..=63).contains(&id.len()) && ok_chars && edge(id.bytes().next()) && edge(id.bytes().last())
}

#[async_trait]
impl Deleter for S3BucketDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let bucket = req.physical_id.as_str();
        match self.s3.delete_bucket().bucket(bucket).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["NoSuchBucket"]) {
                    return guard::not_found(
                        req,
                        self.s3.config().region().map(|r| r.as_ref()),
                        is_bucket_name(bucket),
                        &format!("S3 says bucket {bucket} does not exist"),
                    );
                }
                if info.code_is(&["BucketNotEmpty"]) {
                    return Err(DeleteError::new(
                        req,
                        DeleteErrorKind::NotEmpty,
                        format!(
                            "bucket {bucket} is not empty; cdkd-flow does not delete objects: empty the bucket (every object version too, if versioning was ever on) and run the destroy again"
                        ),
                    ));
                }
                Err(DeleteError::from_aws(req, "DeleteBucket", &info))
            }
        }
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        super::no_poll(req, handle)
    }
}

#[cfg(test)]
mod tests {
    use super::is_bucket_name;

    #[test]
    fn bucket_name_rule_accepts_cdk_names_and_rejects_arns() {
        assert!(is_bucket_name("oraclestack-bucket83908e77"));
        assert!(!is_bucket_name("arn:aws:s3:::b"));
        assert!(!is_bucket_name("Upper"));
        assert!(!is_bucket_name("ab"));
        assert!(!is_bucket_name("-ab"));
    }
}
