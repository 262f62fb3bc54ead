"""Classes Godot 4 knows under another name than Godot 3: the one table of class renames, and the
one rule every converter applies with it.

A Godot 4 engine that meets a class name it cannot make asks its compatibility table: every
``ClassDB::add_compatibility_class(old, new)`` call fills ``compat_classes``, and
``ClassDB::_instantiate_internal`` (``core/object/class_db.cpp``) makes a ``new`` where ``old`` was
asked for.  A converted file is written with the name the engine would load, so that nothing
depends on the table staying in the engine (``#ifndef DISABLE_DEPRECATED``).  The saves converter
(a full Object in a ``var2bytes`` save) and the resource converter (a ``.tres``/``.res``) both ask
:func:`class_change`, so a class is renamed, and told, alike in both:

- a **rename** (the same class under a new name: ``Spatial`` -> ``Node3D``) changes no data: it is
  told as a note, never a loss;
- an **approximation** (a class Godot 4 dropped and loads as something near it: ``ToolButton`` ->
  ``Button``, ``Portal`` -> ``Node3D``) loses what made the class itself: a loss, which
  ``policy="strict"`` refuses and ``"lossy"`` writes as the engine's approximation;
- from Godot 4 back to Godot 3, a rename is read backwards; a Godot 4 class that several Godot 3
  classes became (``Sky`` was ``PanoramaSky`` and ``ProceduralSky``) cannot be told apart again: the
  first is written and that is a loss.

The sources, each row's in its group (:attr:`ClassRename.source`):

- Godot 4's ``scene/register_scene_types.cpp``, in ``register_scene_types()`` under
  ``#ifndef DISABLE_DEPRECATED``, read at godotengine/godot@3c1fe46a224f8341559e93a2129da0df0a39ef41
  (the 4.x master of the engines this library runs, 4.6).  Its blocks ``// Dropped in 4.0, near
  approximation.``, ``// Renamed in 4.0.`` (with its ``PHYSICS_2D``/``PHYSICS_3D``/``NAVIGATION``
  parts) and ``// VisualShader classes.`` are every compatibility class Godot 4 registers (no other
  ``register_types`` of core, servers or modules calls ``add_compatibility_class``).
- Rows left out, because no Godot 3 engine has the class (names of 4.0's development, which a
  Godot 3 file never holds, and which must never be written back into one): ``Navigation3D``,
  ``NavigationRegion``, ``RigidDynamicBody2D``, ``RigidDynamicBody3D``, ``SoftDynamicBody3D``,
  ``VisibilityNotifier3D``, ``VisualShaderNodeScalarTransformMult`` (Godot 3 registers
  ``VisualShaderNodeTransformMult``), and the block ``// Renamed during 4.0 alpha`` but for its two
  classes Godot 3 has (``AudioStreamSample``, ``AudioStreamOGGVorbis``).
- ``Reference`` -> ``RefCounted``: Godot 4 registers no compatibility class for it (decoding a
  ``Reference`` fails there); the engine's project converter renames it
  (``editor/renames_map_3_to_4.cpp``, ``RenamesMap3To4::class_renames``: ``{ "Reference",
  "RefCounted" }``), and both engines write the same object so (fixtures/conversion/corpus.jsonl,
  ``object_reference``: ``Reference.new()`` in 3.2.3, ``RefCounted.new()`` in 4.6).

Three rows the engine calls renames lose data, and are approximations here, each with its reason
(:attr:`ClassRename.lost`): ``AudioStreamOGGVorbis`` (Godot 3 keeps the Ogg file in ``data``, Godot
4's ``AudioStreamOggVorbis`` keeps ``packet_sequence``: ``modules/stb_vorbis`` in 3.x,
``modules/vorbis`` in 4.x) and ``VisualShaderNodeCubeMapUniform`` (the table names
``VisualShaderNodeCubeMapParameter``, which Godot 4 does not register: its class is
``VisualShaderNodeCubemapParameter``, so the engine cannot load it).
"""

from __future__ import annotations

import attrs

__all__ = ["ClassRename", "ClassChange", "CLASS_RENAMES", "GODOT3_TO_GODOT4", "GODOT4_TO_GODOT3", "APPROXIMATED",
           "MERGED", "GODOT4_SOURCE", "class_change"]

#: The Godot 4 tree the compatibility rows were read in.
GODOT4_SOURCE = "godotengine/godot@3c1fe46a224f8341559e93a2129da0df0a39ef41"
_SCENE_TYPES = f"{GODOT4_SOURCE} scene/register_scene_types.cpp, register_scene_types(), #ifndef DISABLE_DEPRECATED"
_COMPAT = "the engine's compatibility table"


@attrs.frozen
class ClassRename:
    """One Godot 3 class that Godot 4 knows under another name."""

    godot3: str
    godot4: str
    #: Where the engine says so (file, function, block).
    source: str
    #: How a note names the source, in a word.
    label: str = _COMPAT
    #: None: the same class under a new name.  Else what Godot 4's class does not keep (a loss).
    lost: str | None = None


def _rows(source: str, block: str, pairs: str, lost: str | None = None, label: str = _COMPAT
          ) -> tuple[ClassRename, ...]:
    """The rows of one block of the source: ``pairs`` is "Old New; Old New; ..." in its order."""
    where = f"{source}, {block}"
    out = []
    for pair in pairs.split(";"):
        if pair.strip():
            old, new = pair.split()
            out.append(ClassRename(old, new, where, label,
                                   None if lost is None else lost.format(old=old, new=new)))
    return tuple(out)


_NEAR = ("Godot 4 has no {old}: it loads it as a {new}, the engine's near approximation (what made it "
         "a {old} is lost)")

#: Every class renamed between Godot 3 and Godot 4, each row once, with its source.
CLASS_RENAMES: tuple[ClassRename, ...] = (
    *_rows(_SCENE_TYPES, "// Dropped in 4.0, near approximation.", """
        AnimationTreePlayer AnimationTree; BakedLightmap LightmapGI; BakedLightmapData LightmapGIData;
        BitmapFont FontFile; DynamicFont FontFile; DynamicFontData FontFile; Navigation2D Node2D;
        OpenSimplexNoise FastNoiseLite; ProximityGroup Node3D; ToolButton Button; YSort Node2D; Portal Node3D;
        Room Node3D; RoomManager Node3D; RoomGroup Node3D; Occluder Node3D; OccluderShapeSphere Resource""",
          lost=_NEAR),
    *_rows(_SCENE_TYPES, "// Renamed in 4.0.", """
        AnimatedSprite AnimatedSprite2D; ARVRCamera XRCamera3D; ARVRController XRController3D;
        ARVRAnchor XRAnchor3D; ARVRInterface XRInterface; ARVROrigin XROrigin3D;
        ARVRPositionalTracker XRPositionalTracker; ARVRServer XRServer; AStar AStar3D;
        BoneAttachment BoneAttachment3D; Camera Camera3D; ClippedCamera ClippedCamera3D; CSGBox CSGBox3D;
        CSGCombiner CSGCombiner3D; CSGCylinder CSGCylinder3D; CSGMesh CSGMesh3D; CSGPolygon CSGPolygon3D;
        CSGPrimitive CSGPrimitive3D; CSGShape CSGShape3D; CSGSphere CSGSphere3D; CSGTorus CSGTorus3D;
        CubeMesh BoxMesh; GIProbe VoxelGI; GIProbeData VoxelGIData; GradientTexture GradientTexture1D;
        Light Light3D; Light2D PointLight2D; LineShape2D WorldBoundaryShape2D; Listener AudioListener3D;
        MeshInstance MeshInstance3D; MultiMeshInstance MultiMeshInstance3D;
        NavigationAgent NavigationAgent3D; NavigationMeshInstance NavigationRegion3D;
        NavigationObstacle NavigationObstacle3D; NavigationServer NavigationServer3D;
        NavigationPolygonInstance NavigationRegion2D; Navigation2DServer NavigationServer2D;
        OmniLight OmniLight3D; PanoramaSky Sky; Particles GPUParticles3D; Particles2D GPUParticles2D;
        ParticlesMaterial ParticleProcessMaterial; Path Path3D; PathFollow PathFollow3D; Position2D Marker2D;
        Position3D Marker3D; ProceduralSky Sky; RemoteTransform RemoteTransform3D; ShortCut Shortcut;
        Skeleton Skeleton3D; SkeletonIK SkeletonIK3D; Spatial Node3D; SpatialGizmo Node3DGizmo;
        SpatialMaterial StandardMaterial3D; SpotLight SpotLight3D; Sprite Sprite2D; StaticBody StaticBody3D;
        StreamTexture CompressedTexture2D; TextureProgress TextureProgressBar; VideoPlayer VideoStreamPlayer;
        ViewportContainer SubViewportContainer; Viewport SubViewport;
        VisibilityEnabler VisibleOnScreenEnabler3D; VisibilityNotifier VisibleOnScreenNotifier3D;
        VisibilityNotifier2D VisibleOnScreenNotifier2D; VisualServer RenderingServer; World World3D;
        Physics2DDirectBodyState PhysicsDirectBodyState2D; Physics2DDirectSpaceState PhysicsDirectSpaceState2D;
        Physics2DServer PhysicsServer2D; Physics2DShapeQueryParameters PhysicsShapeQueryParameters2D;
        Physics2DTestMotionResult PhysicsTestMotionResult2D; RayShape2D SeparationRayShape2D;
        Area Area3D; BoxShape BoxShape3D; CapsuleShape CapsuleShape3D; CollisionObject CollisionObject3D;
        CollisionPolygon CollisionPolygon3D; CollisionShape CollisionShape3D;
        ConcavePolygonShape ConcavePolygonShape3D; ConeTwistJoint ConeTwistJoint3D;
        ConvexPolygonShape ConvexPolygonShape3D; CPUParticles CPUParticles3D; CylinderShape CylinderShape3D;
        DirectionalLight DirectionalLight3D; EditorSpatialGizmo EditorNode3DGizmo;
        EditorSpatialGizmoPlugin EditorNode3DGizmoPlugin; Generic6DOFJoint Generic6DOFJoint3D;
        HeightMapShape HeightMapShape3D; HingeJoint HingeJoint3D; Joint Joint3D; KinematicBody CharacterBody3D;
        KinematicBody2D CharacterBody2D; KinematicCollision KinematicCollision3D; PhysicsBody PhysicsBody3D;
        PhysicalBone PhysicalBone3D; PhysicsDirectBodyState PhysicsDirectBodyState3D;
        PhysicsDirectSpaceState PhysicsDirectSpaceState3D; PhysicsServer PhysicsServer3D;
        PhysicsShapeQueryParameters PhysicsShapeQueryParameters3D; PinJoint PinJoint3D;
        PlaneShape WorldBoundaryShape3D; RayCast RayCast3D; RayShape SeparationRayShape3D; RigidBody RigidBody3D;
        Shape Shape3D; SliderJoint SliderJoint3D; SoftBody SoftBody3D; SphereShape SphereShape3D;
        SpringArm SpringArm3D; VehicleBody VehicleBody3D; VehicleWheel VehicleWheel3D"""),
    *_rows(_SCENE_TYPES, "// VisualShader classes.", """
        VisualShaderNodeScalarConstant VisualShaderNodeFloatConstant;
        VisualShaderNodeScalarFunc VisualShaderNodeFloatFunc; VisualShaderNodeScalarOp VisualShaderNodeFloatOp;
        VisualShaderNodeScalarClamp VisualShaderNodeClamp; VisualShaderNodeVectorClamp VisualShaderNodeClamp;
        VisualShaderNodeScalarInterp VisualShaderNodeMix; VisualShaderNodeVectorInterp VisualShaderNodeMix;
        VisualShaderNodeVectorScalarMix VisualShaderNodeMix;
        VisualShaderNodeScalarSmoothStep VisualShaderNodeSmoothStep;
        VisualShaderNodeVectorSmoothStep VisualShaderNodeSmoothStep;
        VisualShaderNodeVectorScalarSmoothStep VisualShaderNodeSmoothStep;
        VisualShaderNodeVectorScalarStep VisualShaderNodeStep; VisualShaderNodeScalarSwitch VisualShaderNodeSwitch;
        VisualShaderNodeScalarDerivativeFunc VisualShaderNodeDerivativeFunc;
        VisualShaderNodeVectorDerivativeFunc VisualShaderNodeDerivativeFunc;
        VisualShaderNodeBooleanUniform VisualShaderNodeBooleanParameter;
        VisualShaderNodeColorUniform VisualShaderNodeColorParameter;
        VisualShaderNodeScalarUniform VisualShaderNodeFloatParameter;
        VisualShaderNodeTextureUniform VisualShaderNodeTexture2DParameter;
        VisualShaderNodeTextureUniformTriplanar VisualShaderNodeTextureParameterTriplanar;
        VisualShaderNodeTransformUniform VisualShaderNodeTransformParameter;
        VisualShaderNodeVec3Uniform VisualShaderNodeVec3Parameter;
        VisualShaderNodeUniform VisualShaderNodeParameter; VisualShaderNodeUniformRef VisualShaderNodeParameterRef"""),
    *_rows(_SCENE_TYPES, "// VisualShader classes.", "VisualShaderNodeCubeMapUniform VisualShaderNodeCubeMapParameter",
           lost=("the engine's compatibility table names {new}, which Godot 4 does not register (its class is "
                 "VisualShaderNodeCubemapParameter): Godot 4 cannot load it")),
    *_rows(_SCENE_TYPES, "// Renamed during 4.0 alpha", "AudioStreamSample AudioStreamWAV"),
    *_rows(_SCENE_TYPES, "// Renamed during 4.0 alpha", "AudioStreamOGGVorbis AudioStreamOggVorbis",
           lost=("Godot 3's {old} keeps the Ogg file in 'data'; Godot 4's {new} keeps 'packet_sequence' and "
                 "loads the old name without its audio")),
    *_rows("Godot 4 editor/renames_map_3_to_4.cpp", "RenamesMap3To4::class_renames (no compatibility class: "
           "Godot 4 cannot make a Reference)", "Reference RefCounted", label="the engine's 3-to-4 project converter"),
)

#: Godot 4 class names that Godot 3 has too, as a class of its own beside the ones Godot 4 merged
#: into it (Godot 3's scene/register_scene_types.cpp registers VisualShaderNodeSwitch, a vector
#: switch, and VisualShaderNodeScalarSwitch): read backwards, the name is kept, but which one
#: a Godot 4 object was cannot be told.
GODOT3_HAS_TOO: frozenset[str] = frozenset({"VisualShaderNodeSwitch"})

#: Godot 3 class name -> Godot 4 class name, for the renames (no data changes).
GODOT3_TO_GODOT4: dict[str, str] = {r.godot3: r.godot4 for r in CLASS_RENAMES if r.lost is None}
#: Godot 3 class name -> the Godot 4 class the engine loads it as, for the approximations (a loss).
APPROXIMATED: dict[str, str] = {r.godot3: r.godot4 for r in CLASS_RENAMES if r.lost is not None}


def _was() -> dict[str, tuple[str, ...]]:
    """Godot 4 class name -> the Godot 3 classes it was (renames only, in the table's order)."""
    was: dict[str, tuple[str, ...]] = {}
    for row in CLASS_RENAMES:
        if row.lost is None:
            first = was.get(row.godot4) or ((row.godot4,) if row.godot4 in GODOT3_HAS_TOO else ())
            was[row.godot4] = (*first, row.godot3)
    return was


_WAS = _was()
#: Godot 4 class name -> every Godot 3 class it was, where there were several (a loss when read back).
MERGED: dict[str, tuple[str, ...]] = {name: was for name, was in _WAS.items() if len(was) > 1}
#: Godot 4 class name -> the Godot 3 class written for it (the first of several: see MERGED).
GODOT4_TO_GODOT3: dict[str, str] = {name: was[0] for name, was in _WAS.items() if was[0] != name}


@attrs.frozen
class ClassChange:
    """What a conversion does to one class name: ``before`` is written as ``after``; ``loss`` says
    why that changes the data (None: a rename, told as :attr:`note`)."""

    before: str
    after: str
    label: str
    loss: str | None = None

    @property
    def note(self) -> str:
        """How a rename is told, the same in every converter."""
        return f"class {self.before} renamed {self.after} ({self.label})"


def _to3(name: str, was: tuple[str, ...]) -> ClassChange:
    label = next(r.label for r in CLASS_RENAMES if r.godot4 == name and r.lost is None)
    if len(was) == 1:
        return ClassChange(name, was[0], f"{label}, read backwards")
    return ClassChange(name, was[0], label, f"Godot 3 kept {', '.join(was)} apart, which Godot 4 has as one "
                                            f"{name}: written as {was[0]}")


_TO4 = {r.godot3: ClassChange(r.godot3, r.godot4, r.label, r.lost) for r in CLASS_RENAMES}
_TO3 = {name: _to3(name, was) for name, was in _WAS.items()}
#: (source generation, target generation) -> class name -> its change.  A dialect's generation of
#: class names is ``Dialect.object_classes`` (3 or 4).
_CHANGES: dict[tuple[int, int], dict[str, ClassChange]] = {(3, 4): _TO4, (4, 3): _TO3}


def class_change(name: str, source: int, target: int) -> ClassChange | None:
    """What an object of class ``name``, read with Godot ``source``'s class names (3 or 4), is written
    as for Godot ``target``; None when its name stays."""
    change = _CHANGES.get((source, target), {}).get(name)
    return None if change is None or change.before == change.after and change.loss is None else change
