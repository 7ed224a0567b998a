//! `AWS::Lambda::LayerVersion`: the physical id is the layer version ARN
//! (`arn:…:lambda:<region>:<account>:layer:<name>:<version>`); a malformed one is
//! skipped (docs/destroy.md, "SDK deleters"). DeleteLayerVersion succeeds for a missing version, so existence
//! is checked first.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};

pub struct LayerVersionDeleter {
    lambda: aws_sdk_lambda::Client,
}

impl LayerVersionDeleter {
    pub fn new(lambda: aws_sdk_lambda::Client) -> Self {
        LayerVersionDeleter { lambda }
    }
}

/// (layer name, version) from a layer version ARN.
pub fn parse_layer_version_arn(arn: &str) -> Option<(String, i64)> {
    if guard::arn_service(arn) != Some("lambda") {
        return None;
    }
    let resource = arn.splitn(6, ':').nth(5)?;
    let mut parts = resource.split(':');
    if parts.next()? != "layer" {
        return None;
    }
    let name = parts.next().filter(|n| !n.is_empty())?;
    let version = parts.next()?.parse::<i64>().ok()?;
    if parts.next().is_some() {
        return None;
    }
    Some((name.to_owned(), version))
}

impl SdkDeleter for LayerVersionDeleter {
    const TYPES: &'static [&'static str] = &["AWS::Lambda::LayerVersion"];
}

#[async_trait]
impl Deleter for LayerVersionDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let arn = req.physical_id.as_str();
        let Some((name, version)) = parse_layer_version_arn(arn) else {
            return Err(DeleteError::skipped(
                req,
                "the physical id is not a layer version ARN",
            ));
        };
        let region = self.lambda.config().region().map(|r| r.as_ref());
        if let Err(e) = self
            .lambda
            .get_layer_version()
            .layer_name(&name)
            .version_number(version)
            .send()
            .await
        {
            let info = aws_error_info(&e);
            if info.code_is(&["ResourceNotFoundException"]) {
                let is_id = region.is_some_and(|r| guard::arn_in(arn, "lambda", r));
                return guard::not_found(
                    req,
                    region,
                    is_id,
                    &format!("Lambda says layer {name} version {version} does not exist"),
                );
            }
            return Err(DeleteError::from_aws(req, "GetLayerVersion", &info));
        }
        match self
            .lambda
            .delete_layer_version()
            .layer_name(&name)
            .version_number(version)
            .send()
            .await
        {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => Err(DeleteError::from_aws(
                req,
                "DeleteLayerVersion",
                &aws_error_info(&e),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_layer_version_arn;

    #[test]
    fn layer_version_arn_gives_name_and_version_and_malformed_ids_are_refused() {
        assert_eq!(
            parse_layer_version_arn("arn:aws:lambda:us-east-1:1:layer:deps:3"),
            Some(("deps".into(), 3))
        );
        assert_eq!(
            parse_layer_version_arn("arn:aws:lambda:us-east-1:1:layer:deps"),
            None
        );
        assert_eq!(parse_layer_version_arn("deps:3"), None);
        assert_eq!(
            parse_layer_version_arn("arn:aws:lambda:us-east-1:1:function:f:3"),
            None
        );
    }
}
