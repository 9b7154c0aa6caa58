// The few UnityEngine types the sample uses, with Unity's signatures, so CI (which has no
// Unity) compiles Samples~/LeaderboardSample against them and a change to the client
// that breaks the sample fails the build. Not shipped; Unity has the real ones.
namespace UnityEngine
{
    public class Object
    {
    }

    public class Component : Object
    {
    }

    public class Behaviour : Component
    {
    }

    public class MonoBehaviour : Behaviour
    {
    }

    [System.AttributeUsage(System.AttributeTargets.Field)]
    public sealed class SerializeField : System.Attribute
    {
    }

    public static class GUILayout
    {
        public static void Label(string text, params GUILayoutOption[] options)
        {
        }

        public static bool Button(string text, params GUILayoutOption[] options)
        {
            return false;
        }
    }

    public sealed class GUILayoutOption
    {
    }
}
