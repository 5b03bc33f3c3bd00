#!/usr/bin/env python3
"""Checks the SageMaker part of launch bundles against what SageMaker itself accepts.

Usage: check_sagemaker_bundle.py BUNDLE_DIR...

For each bundle folder:
- sagemaker/create_training_job.json is validated against botocore's own SageMaker service
  model (the CreateTrainingJob input shape) with botocore's ParamValidator: required members,
  types, lengths and ranges, unknown members;
- sagemaker/launch.py is parsed as Python, and its `distribution=` literal is checked against
  the parameters the SMP v1 and SMP v2 documentation lists;
- hyperpod/smp_config.json, where present, holds SMP v2 parameters only.

Exit status: 0 all valid, 1 errors (printed), 77 botocore is missing (Debian: python3-botocore).
"""
import ast
import json
import os
import sys

try:
    import botocore
    import botocore.session
    from botocore.validate import ParamValidator
except ImportError:
    print("botocore is not installed (Debian package python3-botocore)", file=sys.stderr)
    sys.exit(77)

# SageMaker developer guide, "SMP v2 reference": the complete list of core parameters.
SMP_V2 = {"hybrid_shard_degree", "sm_activation_offloading", "activation_loading_horizon",
          "fsdp_cache_flush_warnings", "allow_empty_shards", "tensor_parallel_degree",
          "context_parallel_degree", "expert_parallel_degree", "random_seed"}
# SageMaker Python SDK, doc/api/training/smd_model_parallel_general.rst: the SMP v1 parameters
# trainsim writes (a subset of those documented there).
SMP_V1 = {"pipeline_parallel_degree", "tensor_parallel_degree", "microbatches", "pipeline",
          "placement_strategy", "ddp", "shard_optimizer_state"}
DISTRIBUTIONS = {"smdistributed", "torch_distributed", "mpi", "parameter_server"}


def check_request(path, op):
    with open(path) as f:
        params = json.load(f)
    report = ParamValidator().validate(params, op.input_shape)
    return [report.generate_report()] if report.has_errors() else []


def distribution_of(path):
    tree = ast.parse(open(path).read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "distribution":
            return ast.literal_eval(node.value)
    return None


def check_distribution(d):
    errors = []
    if not isinstance(d, dict) or not set(d) <= DISTRIBUTIONS:
        return ["distribution: unknown keys %s" % sorted(set(d or {}) - DISTRIBUTIONS)]
    mp = d.get("smdistributed", {}).get("modelparallel")
    if mp is None:
        return errors
    v2 = d.get("torch_distributed", {}).get("enabled") is True
    allowed = SMP_V2 if v2 else SMP_V1
    unknown = set(mp.get("parameters", {})) - allowed
    if unknown:
        errors.append("SMP %s parameters not documented: %s" % ("v2" if v2 else "v1",
                                                                sorted(unknown)))
    if not v2 and d.get("mpi", {}).get("enabled") is not True:
        errors.append("SMP v1 runs under MPI: distribution.mpi.enabled must be True")
    return errors


def main(folders):
    op = botocore.session.get_session().get_service_model("sagemaker").operation_model(
        "CreateTrainingJob")
    failed = 0
    for folder in folders:
        errors = check_request(os.path.join(folder, "sagemaker/create_training_job.json"), op)
        errors += check_distribution(distribution_of(os.path.join(folder, "sagemaker/launch.py")))
        smp = os.path.join(folder, "hyperpod/smp_config.json")
        if os.path.exists(smp):
            unknown = set(json.load(open(smp))) - SMP_V2
            if unknown:
                errors.append("hyperpod/smp_config.json: not SMP v2 parameters: %s"
                              % sorted(unknown))
        for e in errors:
            print("%s: %s" % (folder, e))
        failed += bool(errors)
    print("botocore %s: %d bundles, %d with errors" % (botocore.__version__, len(folders), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
