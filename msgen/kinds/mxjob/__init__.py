"""MXNet jobs: `kubeflow.org/v1 MXJob` (`v1`) and the original mxnet-operator's
`mxnet.mlkube.io/v1beta1 MxJob` (`v1beta1`)."""
