-- Health of a JobSet (jobset.x-k8s.io), which Argo CD has no check for: without one a failed
-- training reads Healthy. From the conditions the JobSet controller sets
-- (pkg/controllers/jobset_controller.go, failure_policy.go): Failed → Degraded, Completed →
-- Healthy, Suspended (Kueue has not admitted it, or it was paused) → Suspended, a restart in
-- progress → Progressing with its reason; otherwise Progressing.
-- Runs as a resource.customizations.health script: Lua 5.1 (gopher-lua) with the base, table
-- and package libraries only, so no string functions.
local hs = {status = "Progressing", message = "Running"}
if obj.status == nil then
  hs.message = "Waiting for the JobSet controller"
  return hs
end
local found = {}
if obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    if condition.status == "True" then
      found[condition.type] = condition
    end
  end
end
if found["Failed"] ~= nil or obj.status.terminalState == "Failed" then
  hs.status = "Degraded"
  hs.message = (found["Failed"] or {}).message or "JobSet failed"
elseif found["Completed"] ~= nil or obj.status.terminalState == "Completed" then
  hs.status = "Healthy"
  hs.message = (found["Completed"] or {}).message or "JobSet completed"
elseif found["Suspended"] ~= nil then
  hs.status = "Suspended"
  hs.message = found["Suspended"].message
elseif found["RestartingJobSet"] ~= nil then
  hs.message = "Restarting: " .. (found["RestartingJobSet"].message or "")
elseif obj.status.restarts ~= nil and obj.status.restarts > 0 then
  hs.message = "Running after " .. tostring(obj.status.restarts) .. " restart(s)"
end
return hs
