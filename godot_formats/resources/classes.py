"""Godot 3 class names that Godot 4 knows under another name (``ClassDB::add_compatibility_class``
in Godot 4's ``scene/register_scene_types.cpp``, ``#ifndef DISABLE_DEPRECATED``: "Renamed in 4.0",
the VisualShader renames and the 4.0-alpha renames).  A Godot 4 engine loads the old name through
this table; a converted file is written with the new one, and each rename is reported.

Classes that Godot 4 maps to a generic base (``ToolButton`` -> ``Button``, ``Portal`` -> ``Node3D``,
``OccluderShapeSphere`` -> ``Resource``) lose what made them themselves: they are not renames here,
and a conversion that meets them reports the loss instead.
"""

from __future__ import annotations

__all__ = ["GODOT3_TO_GODOT4", "GODOT4_TO_GODOT3", "REPLACED_BY_A_BASE"]

_PAIRS = """
AnimatedSprite AnimatedSprite2D; Area Area3D; ARVRCamera XRCamera3D; ARVRController XRController3D;
ARVRAnchor XRAnchor3D; ARVRInterface XRInterface; ARVROrigin XROrigin3D; ARVRPositionalTracker XRPositionalTracker;
ARVRServer XRServer; AStar AStar3D; BoneAttachment BoneAttachment3D; BoxShape BoxShape3D; Camera Camera3D;
CapsuleShape CapsuleShape3D; ClippedCamera ClippedCamera3D; CollisionObject CollisionObject3D;
CollisionPolygon CollisionPolygon3D; CollisionShape CollisionShape3D; ConcavePolygonShape ConcavePolygonShape3D;
ConeTwistJoint ConeTwistJoint3D; ConvexPolygonShape ConvexPolygonShape3D; CPUParticles CPUParticles3D;
CSGBox CSGBox3D; CSGCombiner CSGCombiner3D; CSGCylinder CSGCylinder3D; CSGMesh CSGMesh3D; CSGPolygon CSGPolygon3D;
CSGPrimitive CSGPrimitive3D; CSGShape CSGShape3D; CSGSphere CSGSphere3D; CSGTorus CSGTorus3D; CubeMesh BoxMesh;
CylinderShape CylinderShape3D; DirectionalLight DirectionalLight3D; EditorSpatialGizmo EditorNode3DGizmo;
EditorSpatialGizmoPlugin EditorNode3DGizmoPlugin; Generic6DOFJoint Generic6DOFJoint3D; GIProbe VoxelGI;
GIProbeData VoxelGIData; GradientTexture GradientTexture1D; HeightMapShape HeightMapShape3D; HingeJoint HingeJoint3D;
Joint Joint3D; KinematicBody CharacterBody3D; KinematicBody2D CharacterBody2D; KinematicCollision KinematicCollision3D;
Light Light3D; Light2D PointLight2D; LineShape2D WorldBoundaryShape2D; Listener AudioListener3D;
MeshInstance MeshInstance3D; MultiMeshInstance MultiMeshInstance3D; NavigationAgent NavigationAgent3D;
NavigationMeshInstance NavigationRegion3D; NavigationObstacle NavigationObstacle3D;
NavigationPolygonInstance NavigationRegion2D; NavigationRegion NavigationRegion3D;
Navigation2DServer NavigationServer2D; NavigationServer NavigationServer3D; OmniLight OmniLight3D; PanoramaSky Sky;
Particles GPUParticles3D; Particles2D GPUParticles2D; ParticlesMaterial ParticleProcessMaterial; Path Path3D;
PathFollow PathFollow3D; PhysicalBone PhysicalBone3D; Physics2DDirectBodyState PhysicsDirectBodyState2D;
Physics2DDirectSpaceState PhysicsDirectSpaceState2D; Physics2DServer PhysicsServer2D;
Physics2DShapeQueryParameters PhysicsShapeQueryParameters2D; Physics2DTestMotionResult PhysicsTestMotionResult2D;
PhysicsBody PhysicsBody3D; PhysicsDirectBodyState PhysicsDirectBodyState3D;
PhysicsDirectSpaceState PhysicsDirectSpaceState3D; PhysicsServer PhysicsServer3D;
PhysicsShapeQueryParameters PhysicsShapeQueryParameters3D; PinJoint PinJoint3D; PlaneShape WorldBoundaryShape3D;
Position2D Marker2D; Position3D Marker3D; ProceduralSky Sky; RayCast RayCast3D; RayShape SeparationRayShape3D;
RayShape2D SeparationRayShape2D; RemoteTransform RemoteTransform3D; RigidBody RigidBody3D; Shape Shape3D;
ShortCut Shortcut; Skeleton Skeleton3D; SkeletonIK SkeletonIK3D; SliderJoint SliderJoint3D; SoftBody SoftBody3D;
Spatial Node3D; SpatialGizmo Node3DGizmo; SpatialMaterial StandardMaterial3D; SphereShape SphereShape3D;
SpotLight SpotLight3D; SpringArm SpringArm3D; Sprite Sprite2D; StaticBody StaticBody3D;
StreamTexture CompressedTexture2D; TextureProgress TextureProgressBar; VehicleBody VehicleBody3D;
VehicleWheel VehicleWheel3D; VideoPlayer VideoStreamPlayer; ViewportContainer SubViewportContainer;
Viewport SubViewport; VisibilityEnabler VisibleOnScreenEnabler3D; VisibilityNotifier VisibleOnScreenNotifier3D;
VisibilityNotifier2D VisibleOnScreenNotifier2D; VisualServer RenderingServer; World World3D;
VisualShaderNodeScalarConstant VisualShaderNodeFloatConstant; VisualShaderNodeScalarFunc VisualShaderNodeFloatFunc;
VisualShaderNodeScalarOp VisualShaderNodeFloatOp; VisualShaderNodeScalarClamp VisualShaderNodeClamp;
VisualShaderNodeVectorClamp VisualShaderNodeClamp; VisualShaderNodeScalarInterp VisualShaderNodeMix;
VisualShaderNodeVectorInterp VisualShaderNodeMix; VisualShaderNodeVectorScalarMix VisualShaderNodeMix;
VisualShaderNodeScalarSmoothStep VisualShaderNodeSmoothStep;
VisualShaderNodeVectorSmoothStep VisualShaderNodeSmoothStep;
VisualShaderNodeVectorScalarSmoothStep VisualShaderNodeSmoothStep;
VisualShaderNodeVectorScalarStep VisualShaderNodeStep;
VisualShaderNodeScalarSwitch VisualShaderNodeSwitch; VisualShaderNodeScalarTransformMult VisualShaderNodeTransformOp;
VisualShaderNodeScalarDerivativeFunc VisualShaderNodeDerivativeFunc;
VisualShaderNodeVectorDerivativeFunc VisualShaderNodeDerivativeFunc;
VisualShaderNodeBooleanUniform VisualShaderNodeBooleanParameter;
VisualShaderNodeColorUniform VisualShaderNodeColorParameter;
VisualShaderNodeScalarUniform VisualShaderNodeFloatParameter;
VisualShaderNodeCubeMapUniform VisualShaderNodeCubeMapParameter;
VisualShaderNodeTextureUniform VisualShaderNodeTexture2DParameter;
VisualShaderNodeTextureUniformTriplanar VisualShaderNodeTextureParameterTriplanar;
VisualShaderNodeTransformUniform VisualShaderNodeTransformParameter;
VisualShaderNodeVec3Uniform VisualShaderNodeVec3Parameter;
VisualShaderNodeUniform VisualShaderNodeParameter; VisualShaderNodeUniformRef VisualShaderNodeParameterRef;
Reference RefCounted
"""

#: Godot 3 class name -> Godot 4 class name.
GODOT3_TO_GODOT4: dict[str, str] = dict(
    tuple(pair.split()) for pair in _PAIRS.replace("\n", " ").split(";") if pair.strip())  # type: ignore[misc]
#: Godot 4 class name -> the Godot 3 name (the first one, where several became one).
GODOT4_TO_GODOT3: dict[str, str] = {}
for _old, _new in GODOT3_TO_GODOT4.items():
    GODOT4_TO_GODOT3.setdefault(_new, _old)
#: Godot 3 classes Godot 4 loads as a generic base class (what made them themselves is lost).
REPLACED_BY_A_BASE: dict[str, str] = {
    "ProximityGroup": "Node3D", "ToolButton": "Button", "YSort": "Node2D", "Portal": "Node3D", "Room": "Node3D",
    "RoomManager": "Node3D", "RoomGroup": "Node3D", "Occluder": "Node3D", "OccluderShapeSphere": "Resource",
}
