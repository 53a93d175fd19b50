-- Health of a Kubeflow Trainer TrainJob (trainer.kubeflow.org), which Argo CD has no check for:
-- without one a failed training reads Healthy. From the conditions Trainer's controller sets
-- (pkg/controller/trainjob_controller.go, and its JobSet plugin, which copies the JobSet's
-- Completed as Complete and its Failed): Failed (its JobSet failed, its activeDeadlineSeconds
-- passed, or its runtime is not supported) → Degraded, Complete → Healthy, Suspended (Kueue
-- has not admitted it, or it was paused) → Suspended; otherwise Progressing.
-- Runs as a resource.customizations.health script: Lua 5.1 (gopher-lua) with the base, table
-- and package libraries only, so no string functions.
local hs = {status = "Progressing", message = "Running"}
if obj.status == nil or obj.status.conditions == nil then
  if obj.spec ~= nil and obj.spec.suspend == true then
    hs.status = "Suspended"
    hs.message = "TrainJob is suspended"
  elseif obj.status == nil or obj.status.jobsStatus == nil then
    hs.message = "Waiting for Trainer's controller"
  end
  return hs
end
local found = {}
for _, condition in ipairs(obj.status.conditions) do
  if condition.status == "True" then
    found[condition.type] = condition
  end
end
if found["Failed"] ~= nil then
  hs.status = "Degraded"
  hs.message = found["Failed"].message or "TrainJob failed"
elseif found["Complete"] ~= nil then
  hs.status = "Healthy"
  hs.message = found["Complete"].message or "TrainJob completed"
elseif found["Suspended"] ~= nil then
  hs.status = "Suspended"
  hs.message = found["Suspended"].message or "TrainJob is suspended"
end
return hs
