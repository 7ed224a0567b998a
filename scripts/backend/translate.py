"""The `AWS::Serverless-2016-10-31` transform, run here with aws-sam-translator (the
library CloudFormation's SAM transform is): moto's CloudFormation has no transforms, so
the emulator receives the plain CloudFormation template CloudFormation would have
processed."""
from typing import Any

import boto3
from samtranslator.parser.parser import Parser
from samtranslator.translator.translator import Translator


def no_managed_policy_lookup() -> dict[str, str]:
    """The managed-policy loader: SAM asks it only for a policy named by a bare name its
    bundled map of AWS managed policies lacks (AWS would call iam:ListPolicies). The
    template names policies by ARN or Ref only, so nothing is looked up: a bare name
    stays as written and CloudFormation's IAM refuses it."""
    return {}


def translate(template: dict[str, Any], parameters: dict[str, str], region: str) -> dict[str, Any]:
    """The template with every SAM resource expanded into CloudFormation resources.
    `parameters` are the stack's parameter values (the transform resolves some of them,
    as CloudFormation's transform does with the values of the CreateStack request)."""
    translator = Translator(None, Parser(), boto_session=boto3.Session(region_name=region))
    return translator.translate(
        template,
        parameter_values=dict(parameters),
        get_managed_policy_map=no_managed_policy_lookup,
    )
