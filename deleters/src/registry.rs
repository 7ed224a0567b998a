//! Maps core's route for a record (`cdkd_core::destroy::decide::route`, the one routing
//! decision) to a deleter, and collects what the SDK deleters declare about themselves
//! ([`crate::SdkDeleter`]): the types they serve and their capabilities, which core's
//! routing takes as facts through [`DeleterCatalog`].

use std::collections::BTreeMap;
use std::sync::Arc;

use cdkd_core::destroy::decide::{route, DeleterCatalog, NoDeleter, Route, SdkCapabilities};

use crate::error::{DeleteError, DeleteErrorKind};
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};

/// The deleters of one destroy run.
#[derive(Clone, Default)]
pub struct Registry {
    sdk: BTreeMap<String, (Arc<dyn Deleter>, SdkCapabilities)>,
    custom: Option<Arc<dyn Deleter>>,
    cloud_control: Option<Arc<dyn Deleter>>,
}

impl Registry {
    /// No deleters yet: every route but no-op answers "unsupported" until one is added.
    pub fn empty() -> Self {
        Registry::default()
    }

    /// Adds an SDK deleter for every type it declares, with its declared capabilities.
    pub fn with_sdk<D: SdkDeleter>(mut self, deleter: D) -> Self {
        let deleter: Arc<dyn Deleter> = Arc::new(deleter);
        for t in D::TYPES {
            self.sdk
                .insert((*t).to_owned(), (Arc::clone(&deleter), D::CAPABILITIES));
        }
        self
    }

    pub fn with_custom_resources(mut self, deleter: Arc<dyn Deleter>) -> Self {
        self.custom = Some(deleter);
        self
    }

    pub fn with_cloud_control(mut self, deleter: Arc<dyn Deleter>) -> Self {
        self.cloud_control = Some(deleter);
        self
    }

    /// Types that have an SDK deleter.
    pub fn sdk_types(&self) -> impl Iterator<Item = &str> {
        self.sdk.keys().map(String::as_str)
    }

    /// Core's route for a record of `resource_type`, given these deleters.
    pub fn route_for(&self, resource_type: &str, provisioned_by: Option<&str>) -> Route {
        route(resource_type, provisioned_by, self)
    }

    /// The deleter for a record, or why there is none.
    pub fn deleter_for(&self, req: &DeleteRequest) -> Result<Arc<dyn Deleter>, DeleteError> {
        self.deleter(
            self.route_for(&req.resource_type, req.provisioned_by.as_deref()),
            req,
        )
    }

    /// The deleter `route` names for `req`, or why there is none.
    pub fn deleter(
        &self,
        route: Route,
        req: &DeleteRequest,
    ) -> Result<Arc<dyn Deleter>, DeleteError> {
        let missing = |what: &str| {
            DeleteError::new(
                req,
                DeleteErrorKind::Unsupported,
                format!("no {what} deleter is configured"),
            )
        };
        match route {
            Route::NoOp => Ok(Arc::new(crate::noop::NoOpDeleter)),
            Route::CustomResource => self.custom.clone().ok_or_else(|| missing("custom-resource")),
            Route::Sdk => self
                .sdk
                .get(&req.resource_type)
                .map(|(d, _)| Arc::clone(d))
                .ok_or_else(|| missing("SDK")),
            Route::CloudControl => self.cloud_control.clone().ok_or_else(|| missing("Cloud Control")),
            Route::NestedStack => Err(DeleteError::new(
                req,
                DeleteErrorKind::Unsupported,
                "a nested stack is destroyed by the workflow (its child record first), not by a deleter",
            )),
            Route::Unsupported => Err(DeleteError::new(
                req,
                DeleteErrorKind::Unsupported,
                NoDeleter {
                    resource_type: req.resource_type.clone(),
                }
                .to_string(),
            )),
        }
    }

    /// Routes and starts the delete.
    pub async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        self.deleter_for(req)?.start(req).await
    }

    /// Routes and polls a delete in flight.
    pub async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        self.deleter_for(req)?.poll(req, handle).await
    }
}

impl DeleterCatalog for Registry {
    fn sdk_deleter(&self, resource_type: &str) -> Option<SdkCapabilities> {
        self.sdk.get(resource_type).map(|(_, caps)| *caps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;

    struct Queue;
    #[async_trait]
    impl Deleter for Queue {
        async fn start(&self, _req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
            Ok(DeleteProgress::Done)
        }
    }
    impl SdkDeleter for Queue {
        const TYPES: &'static [&'static str] = &["AWS::SQS::Queue", "AWS::IAM::User"];
    }

    #[test]
    fn registry_collects_each_declared_type_with_its_capabilities() {
        let reg = Registry::empty().with_sdk(Queue);
        assert_eq!(
            reg.sdk_types().collect::<Vec<_>>(),
            ["AWS::IAM::User", "AWS::SQS::Queue"]
        );
        assert_eq!(
            reg.sdk_deleter("AWS::SQS::Queue"),
            Some(SdkCapabilities::default())
        );
        assert_eq!(reg.sdk_deleter("AWS::SNS::Topic"), None);
        assert_eq!(reg.route_for("AWS::SQS::Queue", None), Route::Sdk);
        assert_eq!(reg.route_for("AWS::IAM::User", Some("cc-api")), Route::Sdk);
        assert_eq!(reg.route_for("AWS::IAM::Group", None), Route::Unsupported);
    }
}
